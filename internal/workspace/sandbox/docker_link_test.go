package sandbox_test

// Docker mode is linked by importing its package (dockerconfig.go); the
// docker tests here run it through sandbox.New like every program does.
import _ "github.com/massgen/massgen/internal/workspace/sandbox/docker"
