#!/usr/bin/env bash
# netperf.sh — prints a directory holding netperf and netserver 2.7, the
# reference for cnperf rr --mode crr (TCP_CRR). Uses the system's if there
# is one; else apt (Ubuntu: multiverse); else Debian's non-free package,
# fetched from the Debian archive, checked against its published SHA-256
# and unpacked into /var/cache/cnperf/netperf (nothing is installed).
set -euo pipefail
if command -v netperf >/dev/null && command -v netserver >/dev/null; then
	dirname "$(command -v netperf)"
	exit 0
fi
CACHE=/var/cache/cnperf/netperf
if [[ -x $CACHE/root/usr/bin/netperf ]]; then
	echo "$CACHE/root/usr/bin"
	exit 0
fi
if DEBIAN_FRONTEND=noninteractive apt-get install -y -qq netperf >/dev/null 2>&1 && command -v netperf >/dev/null; then
	dirname "$(command -v netperf)"
	exit 0
fi
ARCH=$(dpkg --print-architecture)
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
mkdir -p "$CACHE"
# The package's file name and checksum from bookworm's non-free index.
read -r FILE SHA < <(curl -fsS "$MIRROR/dists/bookworm/non-free/binary-$ARCH/Packages.xz" | xz -d |
	awk '/^Package: /{p=($2=="netperf")} p&&/^Filename:/{f=$2} p&&/^SHA256:/{print f, $2; exit}')
[[ -n ${FILE:-} ]] || { echo "netperf.sh: no netperf in $MIRROR bookworm non-free" >&2; exit 1; }
curl -fsS -o "$CACHE/netperf.deb" "$MIRROR/$FILE"
echo "$SHA  $CACHE/netperf.deb" | sha256sum -c --quiet - >&2
dpkg -x "$CACHE/netperf.deb" "$CACHE/root"
echo "$CACHE/root/usr/bin"
