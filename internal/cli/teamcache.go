package cli

import (
	"os"
	"path/filepath"
	"sync"
	"time"
)

// teamCacheSize bounds the teams massgen serve keeps: clients choose the
// model id, and every single-model id is a team of its own.
const teamCacheSize = 64

// teamCache is massgen serve's preparer: one team per config, built on the
// first request for it and shared by every later one. Sharing spares each
// request the config parse and team build, and it makes the team's rate
// limits (requests_per_minute, tokens_per_minute) and circuit breakers
// hold across concurrent requests, as a provider counts them, instead of
// per request. A config file that changed on disk (or, without --config, a
// discovered file that appeared or went away) is read again on the next
// request; runs in flight keep the team they started with. Teams with
// `type: sim` agents are not shared (see prepare).
type teamCache struct {
	mu      sync.Mutex
	entries map[string]*cacheEntry
	closed  bool
}

type cacheEntry struct {
	p        *prepared
	file     string    // the config file read ("" for examples and single models)
	discover bool      // built by discovery (no --config, no model) …
	found    string    // … from this file ("" = the default team from the keys set)
	stamp    fileStamp // of file when it was read
	refs     int       // runs using the team
	evicted  bool      // out of the cache: close the team when refs reach 0
	lastUsed time.Time
}

type fileStamp struct {
	mod  time.Time
	size int64
}

func stampOf(path string) (fileStamp, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}, false
	}
	return fileStamp{fi.ModTime(), fi.Size()}, true
}

func newTeamCache() *teamCache { return &teamCache{entries: map[string]*cacheEntry{}} }

// cacheKey names what rq runs. It is only called for requests
// NewServeRunner builds: a config, a single model, or discovery.
func cacheKey(rq *Request) string {
	switch {
	case rq.Config != "":
		return "config\x00" + rq.Config
	case rq.Model != "":
		return "model\x00" + rq.Model
	}
	return "discover"
}

// prepare is a preparer. A team is built outside the lock; when two first
// requests for a config race, the second build is used by its run alone.
func (c *teamCache) prepare(env *Env, rq *Request, getenv func(string) string) (*prepared, func(), error) {
	key := cacheKey(rq)
	c.mu.Lock()
	e := c.entries[key]
	if e != nil && !e.fresh(env, getenv) {
		c.evictLocked(key, e)
		e = nil
	}
	if e != nil {
		e.refs++
		e.lastUsed = time.Now()
		c.mu.Unlock()
		return e.p, func() { c.release(e) }, nil
	}
	c.mu.Unlock()

	var found string
	if key == "discover" {
		found = discoverConfig(env, getenv)
	}
	p, _, err := prepareFresh(env, rq, getenv)
	if err != nil {
		return nil, nil, err // not cached: the next request reports it again, or finds it fixed
	}
	e = &cacheEntry{p: p, discover: key == "discover", found: found, refs: 1, lastUsed: time.Now()}
	if path := p.cfg.Path; filepath.IsAbs(path) {
		e.file = path
		e.stamp, _ = stampOf(path)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.closed || c.entries[key] != nil: // stopping, or another request cached one first
		e.evicted = true
	case len(p.team.sims) > 0:
		// A scripted simulator scenario is the script of one run: every
		// request plays it from its first step, on a simulator of its own.
		e.evicted = true
	default:
		c.makeRoomLocked()
		c.entries[key] = e
	}
	return e.p, func() { c.release(e) }, nil
}

// fresh says whether the files e was built from are unchanged.
func (e *cacheEntry) fresh(env *Env, getenv func(string) string) bool {
	if e.discover && discoverConfig(env, getenv) != e.found {
		return false
	}
	if e.file == "" {
		return true
	}
	s, ok := stampOf(e.file)
	return ok && s == e.stamp
}

func (c *teamCache) release(e *cacheEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e.refs--
	if e.evicted && e.refs == 0 {
		e.p.team.Close()
	}
}

func (c *teamCache) evictLocked(key string, e *cacheEntry) {
	delete(c.entries, key)
	e.evicted = true
	if e.refs == 0 {
		e.p.team.Close()
	}
}

// makeRoomLocked evicts the least recently used entry when the cache is
// full.
func (c *teamCache) makeRoomLocked() {
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
func (c *teamCache) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for k, e := range c.entries {
		c.evictLocked(k, e)
	}
}
