# A shell with Batsim 4.2, pybatsim 3.2.1, robin (batexpe) and evalys, and this
# repository on PYTHONPATH so that `pybatsim snficon` finds schedulers/snficon.py.
#
#   nix-shell nix/shell.nix          # from the repository root
#
# Pins: see default.nix (nur-kapack a9e0345f8f5d2cb10ba656f1b23dcdec7f2efa0c).
{ pkgs ? import (fetchTarball
    "https://github.com/NixOS/nixpkgs/archive/24.11.tar.gz") { }
, kapack ? import (fetchTarball
    "https://github.com/oar-team/nur-kapack/archive/a9e0345f8f5d2cb10ba656f1b23dcdec7f2efa0c.tar.gz")
    { inherit pkgs; }
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
