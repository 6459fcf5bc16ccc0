package runlog

// ProcessAlive reports whether process pid still runs: a log or session
// turn it left "running" is only interrupted once it is gone.
func ProcessAlive(pid int) bool { return pid > 0 && processAlive(pid) }
