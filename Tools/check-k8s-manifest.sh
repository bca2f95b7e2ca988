#!/usr/bin/env bash
# Checks the Kubernetes Indexed Job in docs/SCALING.md, taken from the doc itself so the two
# cannot drift: it must pass kubernetes-validate's strict schema check (unknown fields
# refused) for the oldest Kubernetes it needs (1.28, where backoffLimitPerIndex appeared) and
# the newest the validator carries, its `--shard` must split into as many shards as the Job
# has completions, and a copy with one field misspelt must fail, so a validator that passes
# anything fails this script. The schemas come with the package (Tools/setup.sh --kubernetes);
# nothing is downloaded here.
#
#   Tools/check-k8s-manifest.sh
set -euo pipefail
cd "$(dirname "$0")/.."
Tools/setup.sh --kubernetes >&2
python=.venv-k8s/bin/python
validator=.venv-k8s/bin/kubernetes-validate
oldest=1.28.0
newest=1.37.0

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# The first ```yaml block after the "## Kubernetes" heading.
awk '/^## Kubernetes/ { section = 1 } section && /^```yaml/ { inside = 1; next } inside && /^```/ { exit } inside' \
    docs/SCALING.md > "$scratch/job.yaml"
[ -s "$scratch/job.yaml" ] || { echo "check-k8s-manifest: no yaml block under '## Kubernetes' in docs/SCALING.md" >&2; exit 1; }

failures=0
report() { printf '%-64s %s\n' "$1" "$2"; [ "$2" = ok ] || failures=$((failures + 1)); }

for version in "$oldest" "$newest"; do
    if "$validator" --strict --quiet -k "$version" "$scratch/job.yaml" >"$scratch/out" 2>&1; then
        report "strict schema, Kubernetes $version" ok
    else
        report "strict schema, Kubernetes $version" "FAILED: $(tr '\n' ' ' <"$scratch/out")"
    fi
done

shards=$("$python" - "$scratch/job.yaml" <<'EOF'
import re, sys, yaml
job = yaml.safe_load(open(sys.argv[1]))
spec = job["spec"]
args = " ".join(spec["template"]["spec"]["containers"][0]["args"])
shard = re.search(r'--shard "\$\{JOB_COMPLETION_INDEX\}/(\d+)"', args)
if spec.get("completionMode") != "Indexed" or not shard or int(shard.group(1)) != spec["completions"]:
    print(f"completionMode={spec.get('completionMode')} completions={spec.get('completions')} shard={shard and shard.group(0)}")
else:
    print("ok")
EOF
)
report "Indexed, --shard \${JOB_COMPLETION_INDEX}/N with N = completions" "$shards"

sed 's/completionMode:/completionMod:/' "$scratch/job.yaml" > "$scratch/misspelt.yaml"
if "$validator" --strict --quiet -k "$newest" "$scratch/misspelt.yaml" >/dev/null 2>&1; then
    report "a misspelt field is refused (the check can fail)" "FAILED: it passed"
else
    report "a misspelt field is refused (the check can fail)" ok
fi

[ "$failures" -eq 0 ] || { echo "check-k8s-manifest: $failures check(s) failed" >&2; exit 1; }
echo "check-k8s-manifest: the Indexed Job in docs/SCALING.md passed"
