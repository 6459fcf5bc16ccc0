package copilot

import (
	"os"
	"path/filepath"
	"runtime"
)

// nativePackages are the platform packages of @github/copilot, as its
// launcher (npm-loader.js) picks them (musl Linux has its own, not found
// here: the launcher runs then).
var nativePackages = map[string]string{
	"linux/amd64":  "@github/copilot-linux-x64",
	"linux/arm64":  "@github/copilot-linux-arm64",
	"darwin/amd64": "@github/copilot-darwin-x64",
	"darwin/arm64": "@github/copilot-darwin-arm64",
}

// Executable implements cli.Resolver: the native binary the npm
// package's launcher would start (its node script spawns it as a child,
// which a kill -9 of the launcher would orphan); found itself when it is
// not that launcher or the binary is not where npm puts it.
func (Vendor) Executable(found string) string {
	pkgName, ok := nativePackages[runtime.GOOS+"/"+runtime.GOARCH]
	if !ok {
		return found
	}
	script, err := filepath.EvalSymlinks(found)
	if err != nil || filepath.Base(script) != "npm-loader.js" {
		return found
	}
	pkg := filepath.Dir(script) // node_modules/@github/copilot
	for _, modules := range []string{filepath.Join(pkg, "node_modules"), filepath.Dir(filepath.Dir(pkg))} {
		bin := filepath.Join(modules, filepath.FromSlash(pkgName), "copilot")
		if fi, err := os.Stat(bin); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return bin
		}
	}
	return found
}
