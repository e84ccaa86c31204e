#!/bin/sh
# amt-check.sh — run amt check in a CI job, keeping the agent state and the
# last passing results between runs (restore and save CACHE_DIR with your CI
# service's cache; see github-actions.yml beside this file).
#
#   examples/ci/amt-check.sh MODEL.onnx IMAGES_DIR [CACHE_DIR] [amt check flags…]
#   examples/ci/amt-check.sh CONFIG [CACHE_DIR] [amt check flags…]
#
# With a model and a folder of images no configuration is needed: amt check
# infers the model's input convention from its input shape, tests with the
# hierarchical scenario and the recommended agent (hts), and writes the
# configuration it used to CACHE_DIR/current/config.yaml (copy it beside
# the model to pin or adjust the settings, then pass it as CONFIG).
#
# CACHE_DIR (default .amt-ci) holds:
#   state/     the agent state: each check continues the bandit where the
#              previous one stopped (the paper's "load existing or
#              initialise new bandit") and saves it again, pass or fail
#   previous/  the results of the last passing check: the baseline of the
#              regression conditions (a failing check does not replace it,
#              so a regression cannot become the new normal)
#   current/   this check's results: summary.md, junit.xml, check.json,
#              gallery/ (publish them as the job's report and artifacts)
#
# Exit status: that of amt check — 0 pass, 1 a condition failed, 2 error.
# Set AMT to the amt binary when it is not on PATH.
set -eu

if [ $# -lt 1 ]; then
	echo "usage: $0 MODEL.onnx IMAGES_DIR [CACHE_DIR] [amt check flags...]" >&2
	echo "       $0 CONFIG [CACHE_DIR] [amt check flags...]" >&2
	exit 2
fi
case $1 in
*.onnx)
	if [ $# -lt 2 ]; then
		echo "$0: a model needs its folder of images: $0 MODEL.onnx IMAGES_DIR [CACHE_DIR] [flags...]" >&2
		exit 2
	fi
	what="-model $1 -images $2"
	shift 2
	;;
*)
	what="-config $1"
	shift 1
	;;
esac
cache=${1:-.amt-ci}
[ $# -ge 1 ] && shift 1
amt=${AMT:-amt}

mkdir -p "$cache"
rm -rf "$cache/current"
if [ -f "$cache/previous/check.json" ]; then
	set -- -baseline "$cache/previous" "$@"
fi

status=0
# $what is two or four words without spaces inside (paths with spaces: use
# a CONFIG).
# shellcheck disable=SC2086
"$amt" check $what -state "$cache/state" -out "$cache/current" "$@" || status=$?

# The job summary (GitHub Actions shows $GITHUB_STEP_SUMMARY on the run's
# page; other services: publish $cache/current/summary.md).
if [ -n "${GITHUB_STEP_SUMMARY:-}" ] && [ -f "$cache/current/summary.md" ]; then
	cat "$cache/current/summary.md" >>"$GITHUB_STEP_SUMMARY"
fi

if [ "$status" -eq 0 ]; then
	rm -rf "$cache/previous.tmp"
	cp -R "$cache/current" "$cache/previous.tmp"
	rm -rf "$cache/previous"
	mv "$cache/previous.tmp" "$cache/previous"
	echo "amt-check: passed; $cache/previous is the next baseline" >&2
elif [ "$status" -eq 1 ]; then
	echo "amt-check: FAILED; see $cache/current/summary.md (baseline kept)" >&2
else
	echo "amt-check: error (exit status $status): no decision" >&2
fi
exit "$status"
