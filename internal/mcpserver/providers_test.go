package mcpserver

// The providers the tests' teams use: app links none by itself (the
// massgen command links them through internal/cli).
import _ "github.com/massgen/massgen/providers/all"
