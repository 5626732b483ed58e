# The snficon Python package, built against nur-kapack's pybatsim 3.2.1 and evalys.
#
#   nix-build nix/default.nix        # ./result/bin/snficon, ./result/bin/snficon-batsim
#
# Package sets pinned in pins.nix (nur-kapack a9e0345f8f5d2cb10ba656f1b23dcdec7f2efa0c).
{ pkgs ? (import ./pins.nix).pkgs
, kapack ? (import ./pins.nix).kapack
}:

let
  py = pkgs.python3.pkgs;
  fs = pkgs.lib.fileset;
in
py.buildPythonPackage {
  pname = "snficon";
  version = "0.1.0";
  pyproject = true;

  src = fs.toSource {
    root = ../.;
    fileset = fs.unions [ ../pyproject.toml ../README.md ../snficon ];
  };

  build-system = [ py.hatchling ];

  dependencies = [
    kapack.pybatsim-321
    kapack.evalys
    kapack.procset
    py.pyzmq
    py.numpy
    py.scipy
    py.pandas
    py.matplotlib
    py.pyarrow
    py.distributed
    py.dask-jobqueue
    py.pyyaml
    py.cryptography
  ];

  # pyproject.toml asks for newer pyarrow, distributed and dask-jobqueue than
  # nixpkgs 24.11 has; the versions there work for this package.
  dontCheckRuntimeDeps = true;
  doCheck = false;
  pythonImportsCheck = [ "snficon" ];

  meta = {
    description = "Energy-aware HPC job scheduling (SNF-ICON and baselines) for Batsim";
    license = pkgs.lib.licenses.mit;
    mainProgram = "snficon";
  };
}
