# lib.sh — what bench/anchors.sh and bench/floor.sh share; sourced from the
# repository's root, after the script's own die().

# need PROGRAM[:PACKAGE]...: apt-installs the Debian package of each
# program that is missing (the program's name when no package is given).
need() {
	local missing=() p
	for p in "$@"; do
		command -v "${p%%:*}" >/dev/null || missing+=("${p#*:}")
	done
	((${#missing[@]})) || return 0
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null ||
		die "cannot install ${missing[*]}"
}

# tools: the C tools and cnperf: sets NETPERF_DIR (bench/netperf.sh) and
# builds $CNPERF if it is missing.
tools() {
	need "$@"
	NETPERF_DIR=$(bench/netperf.sh) || die "no netperf"
	[[ -x $CNPERF ]] || CGO_ENABLED=0 go build -o "$CNPERF" ./cmd/cnperf
}
