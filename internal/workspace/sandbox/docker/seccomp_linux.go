package docker

import (
	"encoding/json"
	"slices"
	"sync"

	"github.com/moby/profiles/seccomp"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// In docker mode with network mode none, the container has no network of
// the host's, but a socket file among its mounts (a docker.sock or an
// agent's socket in a context path) would still reach a host service, as
// under bubblewrap (seccomp_linux.go). Docker's default seccomp profile
// allows unix sockets; the container gets that profile with AF_UNIX taken
// out of what socket(2) may create, and nothing else changed.

// offlineProfile is Docker's default profile less unix sockets, as the
// JSON the engine takes in security_opt seccomp=…
var offlineProfile = sync.OnceValues(func() (string, error) {
	p := seccomp.DefaultProfile()
	var kept []*seccomp.Syscall
	for _, sc := range p.Syscalls {
		if !slices.Equal(sc.Names, []string{"socket"}) || len(sc.Args) != 1 || sc.Args[0].Index != 0 {
			kept = append(kept, sc)
			continue
		}
		a := sc.Args[0]
		switch a.Op {
		case specs.OpEqualTo:
			if a.Value != afUnix {
				kept = append(kept, sc)
			}
		case specs.OpLessThan:
			// A range from AF_UNIX up: each domain above it, one by one.
			for d := uint64(afUnix + 1); d < a.Value; d++ {
				c := *sc
				c.Args = []specs.LinuxSeccompArg{{Index: 0, Value: d, Op: specs.OpEqualTo}}
				kept = append(kept, &c)
			}
		default:
			kept = append(kept, sc)
		}
	}
	p.Syscalls = kept
	b, err := json.Marshal(p)
	return string(b), err
})

const afUnix = 1
