#!/usr/bin/env bash
# ensure_venv DIR PYTHON_VERSION DJANGO_SPEC [EXTRAS]: a virtualenv with the project installed.
# Re-installs only when pyproject.toml or the pins change.

find_python() {
  local version=$1 candidate root bare
  candidate="python$version"
  if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c "" >/dev/null 2>&1; then
    echo "$candidate"; return 0
  fi
  if command -v pyenv >/dev/null 2>&1; then
    root=$(pyenv root)
    bare=$(pyenv versions --bare | grep -E "^${version//./\\.}\.[0-9]+$" | sort -V | tail -n 1)
    if [ -n "$bare" ] && [ -x "$root/versions/$bare/bin/python$version" ]; then
      echo "$root/versions/$bare/bin/python$version"; return 0
    fi
  fi
  echo "Python $version not found (install it, e.g. with pyenv)" >&2
  return 1
}

ensure_venv() {
  local dir=$1 version=$2 django=$3 extras=${4:-dev} python stamp
  stamp="$(cat pyproject.toml | sha1sum | cut -c1-12) $django $extras"
  if [ -x "$dir/bin/python" ] && [ "$(cat "$dir/.stamp" 2>/dev/null)" = "$stamp" ]; then
    return 0
  fi
  python=$(find_python "$version")
  echo "==> preparing $dir (Python $version, $django)" >&2
  [ -x "$dir/bin/python" ] || "$python" -m venv "$dir"
  "$dir/bin/python" -m pip install -q --disable-pip-version-check -e ".[$extras]" "$django" 2>&1 \
    | grep -v "^WARNING: Location" >&2 || true
  "$dir/bin/python" -c "import django_workflow, django" || return 1
  echo "$stamp" > "$dir/.stamp"
}
