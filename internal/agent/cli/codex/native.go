package codex

import (
	"os"
	"path/filepath"
	"runtime"
)

// nativeTargets are the platform packages of @openai/codex and their
// target triples, as its launcher (bin/codex.js) picks them.
var nativeTargets = map[string][2]string{
	"linux/amd64":  {"@openai/codex-linux-x64", "x86_64-unknown-linux-musl"},
	"linux/arm64":  {"@openai/codex-linux-arm64", "aarch64-unknown-linux-musl"},
	"darwin/amd64": {"@openai/codex-darwin-x64", "x86_64-apple-darwin"},
	"darwin/arm64": {"@openai/codex-darwin-arm64", "aarch64-apple-darwin"},
}

// Executable is the native binary the npm package's launcher would start
// (its node script spawns it as a child with Node 20, which a kill -9 of
// the launcher orphans, and costs a second to start here); found itself
// when it is not that launcher or the binary is not where npm puts it.
func (Vendor) Executable(found string) string {
	t, ok := nativeTargets[runtime.GOOS+"/"+runtime.GOARCH]
	if !ok {
		return found
	}
	script, err := filepath.EvalSymlinks(found)
	if err != nil || filepath.Base(script) != "codex.js" {
		return found
	}
	pkg := filepath.Dir(filepath.Dir(script)) // node_modules/@openai/codex
	for _, modules := range []string{filepath.Join(pkg, "node_modules"), filepath.Dir(filepath.Dir(pkg))} {
		bin := filepath.Join(modules, filepath.FromSlash(t[0]), "vendor", t[1], "bin", "codex")
		if fi, err := os.Stat(bin); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return bin
		}
	}
	return found
}
