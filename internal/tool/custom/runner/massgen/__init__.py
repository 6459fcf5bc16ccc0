# massgen's Python tool runner: a stand-in for the MassGen package, so that
# tool files written for upstream MassGen import unchanged. Only what a tool
# file needs is here (massgen.tool._result); a real MassGen installation,
# when present, comes first on sys.path and is used instead.
