#!/usr/bin/env bash
# Checks the commit messages since the history's last long subject (docs/contributing.md): a
# subject of at most 72 characters, and a blank line between it and the body. In a shallow
# clone without that commit, HEAD alone is checked.
set -euo pipefail
cd "$(dirname "$0")/.."

since=462295f1b6b8e765826d0b8ec647681c056f00a7
if git cat-file -e "$since^{commit}" 2>/dev/null; then
    commits=$(git rev-list "$since..HEAD")
else
    commits=$(git rev-list -1 HEAD)
fi
bad=0
for c in $commits; do
    subject=$(git log -1 --format=%s "$c")
    second=$(git log -1 --format=%B "$c" | sed -n 2p)
    if [ "${#subject}" -gt 72 ]; then
        echo "commit ${c:0:10}: subject of ${#subject} characters (at most 72): $subject" >&2
        bad=1
    fi
    if [ -n "$second" ]; then
        echo "commit ${c:0:10}: no blank line after the subject: $subject" >&2
        bad=1
    fi
done
exit "$bad"
