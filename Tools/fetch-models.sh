#!/usr/bin/env bash
# Fetches MediaPipe's face models (Apache-2.0) from the mediapipe==0.10.21 wheel
# on PyPI and extracts the five .tflite files Velvet uses. Idempotent: files
# already present with the expected SHA-256 are kept; nothing is downloaded
# when all five are there.
#
# Models dir: $VELVET_MODELS_DIR, default <repo>/models.
# The 0.10.21 wheels are tagged manylinux_2_28; the platform flags are explicit
# so the download works on any host (the wheel is only unzipped, never run).
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
models_dir="${VELVET_MODELS_DIR:-$repo_root/models}"
mediapipe_version="0.10.21"

# "path in the wheel  sha256" for each model.
models=(
  "mediapipe/modules/face_detection/face_detection_short_range.tflite bbff11cebd1eb27a1e004cae0b0e63ec8c551cbf34a4451148b4908b8db3eca8"
  "mediapipe/modules/face_detection/face_detection_full_range_sparse.tflite 2c3728e6da56f21e21a320433396fb06d40d9088f2247c05e5635a688d45dfe1"
  "mediapipe/modules/face_landmark/face_landmark.tflite 1055cb9d4a9ca8b8c688902a3a5194311138ba256bcc94e336d8373a5f30c814"
  "mediapipe/modules/selfie_segmentation/selfie_segmentation.tflite 9ee168ec7c8f2a16c56fe8e1cfbc514974cbbb7e434051b455635f1bd1462f5c"
  "mediapipe/modules/selfie_segmentation/selfie_segmentation_landscape.tflite a77d03f4659b9f6b6c1f5106947bf40e99d7655094b6527f214ea7d451106edd"
)

fail() { echo "fetch-models: error: $*" >&2; exit 1; }

command -v python3 >/dev/null 2>&1 || fail "python3 not found; install Python 3 (with pip)."

sha256_of() { python3 -c 'import hashlib,sys; print(hashlib.sha256(open(sys.argv[1],"rb").read()).hexdigest())' "$1"; }

missing=()
for entry in "${models[@]}"; do
  read -r path sha <<<"$entry"
  file="$models_dir/$(basename "$path")"
  if [[ -f "$file" && "$(sha256_of "$file")" == "$sha" ]]; then
    continue
  fi
  [[ -e "$file" ]] && echo "fetch-models: $file has the wrong checksum; fetching it again."
  missing+=("$entry")
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "fetch-models: all ${#models[@]} models present and verified in $models_dir; nothing to do."
  exit 0
fi

echo "fetch-models: ${#missing[@]} of ${#models[@]} models missing in $models_dir; downloading mediapipe==$mediapipe_version from PyPI."
python3 -m pip --version >/dev/null 2>&1 || fail "pip not available for python3; install python3-pip."
mkdir -p "$models_dir" || fail "cannot create models dir $models_dir"

tmp_dir="$(mktemp -d)"
trap 'rm -rf "$tmp_dir"' EXIT

if ! python3 -m pip download --no-deps --only-binary=:all: \
      --python-version 3.11 \
      --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
      "mediapipe==$mediapipe_version" -d "$tmp_dir" >"$tmp_dir/pip.log" 2>&1; then
  cat "$tmp_dir/pip.log" >&2
  fail "pip download of mediapipe==$mediapipe_version failed (PyPI must be reachable)."
fi

shopt -s nullglob
wheels=("$tmp_dir"/mediapipe-"$mediapipe_version"-*.whl)
shopt -u nullglob
[[ ${#wheels[@]} -ge 1 ]] || fail "pip reported success but no mediapipe wheel is in $tmp_dir."
echo "fetch-models: downloaded $(basename "${wheels[0]}")"

# Each file goes to a temporary name, is verified, then renamed, so an
# interrupted or bad extract never leaves a damaged model behind.
python3 - "${wheels[0]}" "$models_dir" "${missing[@]}" <<'PY' || fail "extracting models from the wheel failed."
import hashlib, os, sys, zipfile
wheel, out_dir, entries = sys.argv[1], sys.argv[2], sys.argv[3:]
with zipfile.ZipFile(wheel) as z:
    names = set(z.namelist())
    for entry in entries:
        path, sha = entry.split()
        if path not in names:
            sys.exit(f"fetch-models: error: {path} not found in {os.path.basename(wheel)}")
        data = z.read(path)
        if hashlib.sha256(data).hexdigest() != sha:
            sys.exit(f"fetch-models: error: {path} in the wheel has an unexpected SHA-256")
        dest = os.path.join(out_dir, os.path.basename(path))
        with open(dest + ".part", "wb") as f:
            f.write(data)
        os.replace(dest + ".part", dest)
        print(f"fetch-models: extracted {dest} ({len(data):,} bytes)")
PY

echo "fetch-models: done; models are in $models_dir"
