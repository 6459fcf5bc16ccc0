//go:build !linux

package workspace

import (
	"errors"
	"os"
)

// Outside Linux there is no openat2(RESOLVE_BENEATH): rather than check
// paths as strings, which is what this package exists not to do, New
// refuses and an agent gets no workspace.
var errUnsupported = errors.New("workspace: safe workspaces need Linux (openat2 with RESOLVE_BENEATH); agents get no workspace on this system")

func supported() error { return errUnsupported }

// The operations exist so that callers build; New never returns a Guard here.

func (g *Guard) ReadFile(string, int64) ([]byte, int64, string, error) {
	return nil, 0, "", errUnsupported
}
func (g *Guard) Peek(string, int64) ([]byte, int64, string, error) { return nil, 0, "", errUnsupported }
func (g *Guard) WriteFile(string, []byte) (string, bool, error)    { return "", false, errUnsupported }
func (g *Guard) Mkdir(string) (string, error)                      { return "", errUnsupported }
func (g *Guard) Remove(string) (string, error)                     { return "", errUnsupported }
func (g *Guard) ReadDir(string) ([]Entry, string, error)           { return nil, "", errUnsupported }
func (g *Guard) Walk(string, int, func(string, Entry) error) (string, error) {
	return "", errUnsupported
}
func (g *Guard) WorkDir(string) (string, error) { return "", errUnsupported }
func (g *Guard) Mounts() []Mount                { return nil }

const oNoFollow = 0

func isLoop(error) bool { return false }

func reflink(_, _ *os.File) error { return errUnsupported }

func (g *Guard) Check(string, string, Access) error { return errUnsupported }

func lstatID(string) (fileID, bool) { return fileID{}, false }
