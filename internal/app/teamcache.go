package app

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/massgen/massgen/internal/config"
)

// teamCacheSize bounds the teams massgen serve keeps: clients choose the
// model id, and every single-model id is a team of its own.
const teamCacheSize = 64

// TeamCache is massgen serve's preparer: one team per config, built on the
// first request for it and shared by every later one. Sharing spares each
// request the config parse and team build, and it makes the team's rate
// limits (requests_per_minute, tokens_per_minute) and circuit breakers
// hold across concurrent requests, as a provider counts them, instead of
// per request. A config file that changed on disk (or, without --config, a
// discovered file that appeared or went away) is read again on the next
// request; runs in flight keep the team they started with. Teams with
// `type: sim` agents are not shared (see prepare).
type TeamCache struct {
	mu      sync.Mutex
	entries map[string]*cacheEntry
	closed  bool
}

type cacheEntry struct {
	p        *prepared
	file     string // the config file read ("" for examples and single models)
	discover bool   // built by discovery (no --config, no model): file is what it found
	seen     source // the files as they were when p was built
	refs     int    // runs using the team
	evicted  bool   // out of the cache: close the team when refs reach 0
	lastUsed time.Time
}

// source is what the files behind a team look like on disk.
type source struct {
	found string    // discovery: the file it finds now ("" = the default team)
	stamp fileStamp // of the config file (zero when there is none)
}

// fileStamp tells versions of a file apart: modification time (in
// nanoseconds, comparable with ==) and size.
type fileStamp struct {
	mod, size int64
}

func stampOf(path string) fileStamp {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}
	}
	return fileStamp{fi.ModTime().UnixNano(), fi.Size()}
}

// observe looks at the files behind e now.
func (e *cacheEntry) observe(env *Env, getenv func(string) string) source {
	var s source
	file := e.file
	if e.discover {
		s.found = discoverConfig(env, getenv)
		file = s.found
	}
	if file != "" {
		s.stamp = stampOf(file)
	}
	return s
}

// NewTeamCache returns an empty cache; Close it once its runs have ended.
func NewTeamCache() *TeamCache { return &TeamCache{entries: map[string]*cacheEntry{}} }

// cacheKey names what rq runs. Only requests that name their team by a
// config file, a single model or discovery are cached (see prepare).
func cacheKey(rq *Request) string {
	switch {
	case rq.Config != "":
		return "config\x00" + rq.Config
	case rq.Model != "":
		return "model\x00" + rq.Model
	}
	return "discover"
}

// prepare is a preparer. Teams are built outside the lock: when two
// requests race to build the same config, the second team serves its run
// alone.
//
// A config that changed on disk is built anew. When the new version cannot
// be used (a typo, or a file caught half-written by an editor), the
// previous team keeps serving and says why, once per version of the file,
// as a warning of the run that found it (massgen serve prints its runs'
// warnings on its stderr, each once): a running server does not start failing requests
// because of an edit in progress.
func (c *TeamCache) prepare(env *Env, rq *Request, getenv func(string) string) (*prepared, func(), error) {
	if rq.ConfigYAML != nil || len(rq.Agents) > 0 {
		return prepareFresh(env, rq, getenv) // a value has no file to watch: nothing tells its versions apart
	}
	key := cacheKey(rq)
	c.mu.Lock()
	old := c.entries[key]
	var now source
	if old != nil {
		if now = old.observe(env, getenv); now == old.seen {
			return c.useLocked(old)
		}
	}
	c.mu.Unlock()

	p, _, err := prepareFresh(env, rq, getenv)
	if err != nil {
		c.mu.Lock()
		if cur := c.entries[key]; cur != nil && KindOf(err) == KindConfig {
			// old, or a team another request has built meanwhile.
			if cur == old && old.seen != now {
				old.seen = now
				msg := fmt.Sprintf("massgen serve keeps running the previous version of this config: %v", err)
				p, release, _ := c.useLocked(cur)
				withNote := *p // shared by the other runs: the note is this run's
				withNote.warnings = append(slices.Clip(p.warnings), msg)
				return &withNote, release, nil
			}
			return c.useLocked(cur)
		}
		c.mu.Unlock()
		return p, nil, err // p: the config's warnings, when it was read
	}
	e := &cacheEntry{p: p, discover: key == "discover"}
	// A scripted simulator scenario is the script of one run: every
	// request plays it from its first step, on a simulator of its own.
	shared := len(p.team.sims) == 0
	if shared {
		if path := p.cfg.Path; filepath.IsAbs(path) {
			e.file = path
		}
		e.seen = e.observe(env, getenv)
		// If the file changed again while it was being read, this team
		// serves this run only, and the next request reads the file again.
		shared = e.unchangedSince(p.cfg)
	}
	if shared {
		p.team.startMCP("", time.Time{}) // it outlives this run: its servers' logs are its own (see startMCP)
	}
	c.mu.Lock()
	switch {
	case !shared || c.closed || c.entries[key] != old: // or stopping, or another request cached a newer team
		e.evicted = true
	default:
		if old != nil {
			c.evictLocked(key, old)
		}
		c.makeRoomLocked()
		c.entries[key] = e
	}
	return c.useLocked(e)
}

// useLocked takes a reference to e for one run, and unlocks c.
func (c *TeamCache) useLocked(e *cacheEntry) (*prepared, func(), error) {
	e.refs++
	e.lastUsed = time.Now()
	c.mu.Unlock()
	return e.p, func() { c.release(e) }, nil
}

// unchangedSince says whether e's file still holds what cfg was parsed
// from, so that e.seen describes that content.
func (e *cacheEntry) unchangedSince(cfg *config.Config) bool {
	if e.file == "" {
		return true
	}
	data, err := os.ReadFile(e.file)
	return err == nil && bytes.Equal(data, cfg.Raw)
}

func (c *TeamCache) release(e *cacheEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e.refs--
	if e.evicted && e.refs == 0 {
		e.p.team.Close()
	}
}

func (c *TeamCache) evictLocked(key string, e *cacheEntry) {
	delete(c.entries, key)
	e.evicted = true
	if e.refs == 0 {
		e.p.team.Close()
	}
}

// makeRoomLocked evicts the least recently used entry when the cache is
// full.
func (c *TeamCache) makeRoomLocked() {
	if len(c.entries) < teamCacheSize {
		return
	}
	var oldest string
	for k, e := range c.entries {
		if oldest == "" || e.lastUsed.Before(c.entries[oldest].lastUsed) {
			oldest = k
		}
	}
	c.evictLocked(oldest, c.entries[oldest])
}

// Close closes every team once its runs have ended; teams built after
// Close belong to their run alone.
func (c *TeamCache) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for k, e := range c.entries {
		c.evictLocked(k, e)
	}
}
