#!/usr/bin/env bash
# A PNG of a run's report as a browser shows it: `sparseditto report` writes the page, headless chromium
# (Debian's; scripts/setup.sh installs it) takes the screenshot.
#   scripts/report_screenshot.sh RUN_DIR OUT.png
# RUN_DIR: a run's folder (runs/<run>, holding store/; copy it from the GPU machine, nothing else is
# needed). Environment: SPARSEDITTO (default build/bin/sparseditto, then sparseditto on PATH), CHROMIUM
# (default chromium on PATH), WIDTH and HEIGHT of the window in pixels (default 1280 x 8000: the
# screenshot is the window, so a tall one holds the whole page). The page itself is kept as
# OUT.png's name with .html. Exit status: 0, 1 with a message naming the step that failed, 2 for usage.
set -uo pipefail
[[ $# -eq 2 ]] || { sed -n '2,9p' "$0" >&2; exit 2; }
run_dir="$1"; out="$2"
here=$(cd "$(dirname "$0")/.." && pwd)
sd="${SPARSEDITTO:-}"
[[ -n "$sd" ]] || { [[ -x "$here/build/bin/sparseditto" ]] && sd="$here/build/bin/sparseditto"; }
[[ -n "$sd" ]] || sd=$(command -v sparseditto || true)
[[ -n "$sd" && -x "$sd" ]] || { echo "report_screenshot: no sparseditto binary (set SPARSEDITTO)" >&2; exit 1; }
chromium="${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}"
[[ -n "$chromium" ]] || { echo "report_screenshot: no chromium (apt-get install chromium, or set CHROMIUM)" >&2; exit 1; }
[[ -d "$run_dir/store" ]] || { echo "report_screenshot: $run_dir holds no store/ (give a run's folder)" >&2; exit 1; }

out=$(realpath -m "$out")
html="${out%.png}.html"
"$sd" report "$run_dir" --out "$html" >/dev/null || { echo "report_screenshot: sparseditto report failed" >&2; exit 1; }
profile=$(mktemp -d "${TMPDIR:-/tmp}/report_screenshot.XXXXXX")
trap 'rm -rf "$profile"' EXIT
# --no-sandbox: chromium refuses to run as root with its sandbox; the page is our own, with a CSP that
# allows no fetch and only its own script.
timeout 120 "$chromium" --headless --disable-gpu --no-sandbox --disable-dev-shm-usage --no-first-run --hide-scrollbars \
  --user-data-dir="$profile" --window-size="${WIDTH:-1280},${HEIGHT:-8000}" --screenshot="$out" \
  "file://$html" 2>"$profile/chromium.log"
if [[ ! -s "$out" ]]; then
  echo "report_screenshot: chromium wrote no screenshot; its log:" >&2
  tail -20 "$profile/chromium.log" >&2
  exit 1
fi
echo "$out (page: $html)"
