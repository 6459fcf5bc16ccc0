#!/bin/sh
# A command tool: JSON arguments in on stdin, a JSON result out.
read -r args
case "$args" in
  *fail*) echo "asked to fail" >&2; exit 2 ;;
  *sleep*) sleep 30 ;;
esac
printf '{"received": %s, "cwd_has_tools_py": %s}\n' "$args" "$( [ -f tools.py ] && echo true || echo false )"
