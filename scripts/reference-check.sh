#!/usr/bin/env bash
# Regenerates the evaluation's reference fixtures with their independent
# scripts and fails if any differs from the committed one, so that the
# metrics' reference numbers cannot drift from the code that made them
# (issue 47, item 6). `make test` compares the Go code with the fixtures;
# this compares the fixtures with their scripts:
#   testdata/score/make_score_ref.py  ε, bucket points, F, KLoM, confidence (NumPy)
#   testdata/score/make_ulira_ref.py  U-LiRA (NumPy)
#   testdata/mia/make_mia_ref.py      SVC MIA as SalUn, the loss attack (PyTorch, scikit-learn)
# The scripts write in place: a fixture that drifted is left regenerated in
# the working tree for `git diff`. Installs Debian's python3-numpy,
# python3-sklearn and python3-torch when missing (about a minute; they are
# not needed by `make test`). testdata/svc's fixtures (scikit-learn SVC fits
# of up to 20,000 examples, with their fit times) are not regenerated here.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=/usr/bin/python3
need=()
for m in numpy:python3-numpy sklearn:python3-sklearn torch:python3-torch onnx:python3-onnx; do
  $PY -c "import ${m%%:*}" 2>/dev/null || need+=("${m#*:}")
done
CALLER=reference-check ./scripts/apt-install.sh ${need[@]+"${need[@]}"}
files=(testdata/score/ref.json testdata/score/ulira_ref.json testdata/mia/ref.json testdata/mia/ref.npz)
if ! git diff --quiet -- "${files[@]}"; then
  echo "reference-check: ${files[*]} have uncommitted changes; commit or restore them first" >&2
  exit 1
fi
for s in testdata/score/make_score_ref.py testdata/score/make_ulira_ref.py testdata/mia/make_mia_ref.py; do
  echo "reference-check: $s" >&2
  $PY "$s" >/dev/null
done
if ! git diff --quiet -- "${files[@]}"; then
  echo "reference-check: these fixtures differ from what their scripts make now:" >&2
  git diff --stat -- "${files[@]}" >&2
  exit 1
fi
echo "reference-check: ${#files[@]} fixtures are what their scripts make"
