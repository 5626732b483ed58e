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
  python = pkgs.python3.withPackages (ps: [
    snficon
    kapack.pybatsim-321
    kapack.evalys
    ps.pytest
    ps.hypothesis
  ]);
in
pkgs.mkShell {
  packages = [
    kapack.batsim-420
    kapack.batexpe
    python
  ];

  shellHook = ''
    # The working tree comes first: schedulers/ for pybatsim, snficon/ as edited.
    export PYTHONPATH="${toString ../.}''${PYTHONPATH:+:$PYTHONPATH}"
  '';
}
