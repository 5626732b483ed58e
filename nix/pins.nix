# The pinned package sets shared by default.nix and shell.nix.
#
# nur-kapack is pinned to a revision (2025-04, nixpkgs 24.11) that still defines
# batsim-420 (Batsim 4.2.0), pybatsim-321, batexpe (robin) and evalys; its
# master no longer does. nixpkgs is pinned to the matching release.
rec {
  pkgs = import (fetchTarball
    "https://github.com/NixOS/nixpkgs/archive/24.11.tar.gz") { };
  kapack = import (fetchTarball
    "https://github.com/oar-team/nur-kapack/archive/a9e0345f8f5d2cb10ba656f1b23dcdec7f2efa0c.tar.gz")
    { inherit pkgs; };
}
