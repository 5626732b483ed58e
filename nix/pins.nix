# The pinned package sets shared by default.nix and shell.nix.
#
# nur-kapack is pinned to a revision (2025-04) that still defines batsim-420
# (Batsim 4.2.0), pybatsim-321, batexpe (robin) and evalys; its master no longer
# does. nixpkgs is pinned to the revision that nur-kapack revision's own
# flake.lock locks (nixos/nixpkgs, ref branch-off-24.11): the package set it was
# built and tested against.
#
# Each sha256 is the hash of the unpacked archive (what `nix-prefetch-url --unpack`
# prints), so a download that differs is refused:
# - nur-kapack: computed from a git archive of the pinned commit;
# - nixpkgs: the narHash of that flake.lock entry
#   (sha256-CqCX4JG7UiHvkrBTpYC3wcEurvbtTADLbo3Ns2CEoL8=) written in nix's base-32,
#   the same hash since the flake fetcher unpacks the same GitHub archive.
rec {
  pkgs = import (fetchTarball {
    url = "https://github.com/NixOS/nixpkgs/archive/8b27c1239e5c421a2bbc2c65d52e4a6fbf2ff296.tar.gz";
    sha256 = "1gx0hihb7kcddv5h0k7dysp2xhf1ny0aalxhjbpj2lmvj7h9g80a";
  }) { };
  kapack = import (fetchTarball {
    url = "https://github.com/oar-team/nur-kapack/archive/a9e0345f8f5d2cb10ba656f1b23dcdec7f2efa0c.tar.gz";
    sha256 = "0wxk6ybnd716fzs8hjh9ia1543aj0r5sh5wn3j9094p6iijb20rh";
  }) { inherit pkgs; };
}
