#!/usr/bin/env bash
# Installs what Velvet needs on Debian 12. Safe to re-run: it only installs what is missing.
#
#   Tools/setup.sh            Debian packages (Vulkan + lavapipe + validation layer, glslang, FFmpeg)
#   Tools/setup.sh --python   also the benchmark anchors: .venv (OpenCV with contrib, LiteRT, numpy) and
#                             .venv-mediapipe (mediapipe 0.10.21, which needs numpy < 2)
#   Tools/setup.sh --models   also MediaPipe's face models (Tools/fetch-models.sh)
#   Tools/setup.sh --assets   also the test photos and video (Tools/fetch-test-assets.sh, fetch-test-photos.sh,
#                             fetch-test-video.sh)
#   Tools/setup.sh --browser  also headless Chromium (the A/B report test opens the report in it)
#   Tools/setup.sh --slurm    also MUNGE and Slurm's controller, node daemon and client (Tools/slurm-test.sh)
#   Tools/setup.sh --kubernetes  also .venv-k8s with kubernetes-validate, which carries the Kubernetes
#                             schemas offline (Tools/check-k8s-manifest.sh)
set -euo pipefail
cd "$(dirname "$0")/.."

want_python=0
want_models=0
want_assets=0
want_browser=0
want_slurm=0
want_kubernetes=0
for argument in "$@"; do
    case "$argument" in
        --python) want_python=1 ;;
        --models) want_models=1 ;;
        --assets) want_assets=1 ;;
        --browser) want_browser=1 ;;
        --slurm) want_slurm=1 ;;
        --kubernetes) want_kubernetes=1 ;;
        *) echo "setup: unknown option $argument" >&2; exit 2 ;;
    esac
done

packages=(
    pkg-config libvulkan-dev mesa-vulkan-drivers vulkan-tools vulkan-validationlayers
    glslang-dev glslang-tools spirv-tools
    libavcodec-dev libavformat-dev libswscale-dev libswresample-dev libavutil-dev ffmpeg
    python3 python3-venv python3-pip unzip strace
)
[ "$want_browser" -eq 1 ] && packages+=(chromium)
[ "$want_slurm" -eq 1 ] && packages+=(munge slurmctld slurmd slurm-client)
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    echo "setup: installing ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v swift >/dev/null 2>&1; then
    echo "setup: the Swift 6.3 toolchain is not on PATH; install it from swift.org and re-run" >&2
    exit 1
fi

if [ "$want_python" -eq 1 ]; then
    if [ ! -x .venv/bin/python ]; then
        echo "setup: creating .venv"
        python3 -m venv .venv
    fi
    if ! .venv/bin/python -c "import cv2, numpy, ai_edge_litert; cv2.ximgproc" 2>/dev/null; then
        echo "setup: installing Python benchmark anchors (OpenCV with contrib, LiteRT) into .venv"
        .venv/bin/python -m pip uninstall -q -y opencv-python-headless 2>/dev/null || true
        .venv/bin/python -m pip install -q --disable-pip-version-check opencv-contrib-python-headless==4.10.0.84 numpy \
            ai-edge-litert==2.3.0
    fi
    if [ ! -x .venv-mediapipe/bin/python ]; then
        echo "setup: creating .venv-mediapipe"
        python3 -m venv .venv-mediapipe
    fi
    if ! .venv-mediapipe/bin/python -c "import mediapipe, cv2" 2>/dev/null; then
        echo "setup: installing mediapipe 0.10.21 into .venv-mediapipe"
        .venv-mediapipe/bin/python -m pip install -q --disable-pip-version-check mediapipe==0.10.21
    fi
fi

if [ "$want_kubernetes" -eq 1 ]; then
    if [ ! -x .venv-k8s/bin/python ]; then
        echo "setup: creating .venv-k8s"
        python3 -m venv .venv-k8s
    fi
    if ! .venv-k8s/bin/python -c "import kubernetes_validate" 2>/dev/null; then
        echo "setup: installing kubernetes-validate 1.37.0 (with its schemas) into .venv-k8s"
        .venv-k8s/bin/python -m pip install -q --disable-pip-version-check kubernetes-validate==1.37.0
    fi
fi

if [ "$want_models" -eq 1 ]; then
    Tools/fetch-models.sh
fi

if [ "$want_assets" -eq 1 ]; then
    Tools/fetch-test-assets.sh
    Tools/fetch-test-photos.sh
    Tools/fetch-test-video.sh
fi
