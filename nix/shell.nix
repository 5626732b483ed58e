# A shell with Batsim 4.2, pybatsim 3.2.1, robin (batexpe) and evalys, and this
# repository on PYTHONPATH so that `pybatsim snficon` finds schedulers/snficon.py.
#
#   nix-shell nix/shell.nix          # from the repository root
#
# Pins: see pins.nix (nur-kapack a9e0345f8f5d2cb10ba656f1b23dcdec7f2efa0c).
{ pkgs ? (import ./pins.nix).pkgs
, kapack ? (import ./pins.nix).kapack
}:

let
  snficon = import ./default.nix { inherit pkgs kapack; };
  # Every dependency of pyproject.toml is named here too (tests/test_nix_files.py
  # checks it), so that the working tree's snficon/ imports in this Python.
  python = pkgs.python3.withPackages (ps: [
    snficon
    kapack.pybatsim-321
    kapack.evalys
    kapack.procset
    ps.pyzmq
    ps.numpy
    ps.scipy
    ps.pandas
    ps.matplotlib
    ps.pyarrow
    ps.distributed
    ps.dask-jobqueue
    ps.pyyaml
    ps.cryptography
    ps.pytest
    ps.hypothesis
  ]);
  # import-linter (`lint-imports`) is a top-level package in newer nixpkgs only.
  importLinter = pkgs.import-linter or null;
in
pkgs.mkShell {
  packages = [
    kapack.batsim-420
    kapack.batexpe
    python
    pkgs.ruff
  ] ++ pkgs.lib.optional (importLinter != null) importLinter;

  shellHook = ''
    # The working tree comes first: schedulers/ for pybatsim, snficon/ as edited.
    export PYTHONPATH="${toString ../.}''${PYTHONPATH:+:$PYTHONPATH}"
  '' + pkgs.lib.optionalString (importLinter == null) ''
    echo "nix/shell.nix: this nixpkgs has no import-linter; lint-imports is not in the shell" >&2
  '';
}
