package cmd

import (
	"os"
	"runtime/debug"
	"testing"
)

// TestSetDevGOGC_collectsLessOftenUnlessGOGCIsSet: bastion dev's manager
// runs with DevGOGC, and a GOGC in the environment wins.
func TestSetDevGOGC_collectsLessOftenUnlessGOGCIsSet(t *testing.T) {
	before := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(before) })
	gogc, had := os.LookupEnv("GOGC")
	t.Cleanup(func() {
		if had {
			os.Setenv("GOGC", gogc)
		} else {
			os.Unsetenv("GOGC")
		}
	})

	os.Unsetenv("GOGC")
	setDevGOGC()
	if got := debug.SetGCPercent(100); got != DevGOGC {
		t.Errorf("without GOGC, the manager's GC percent is %d, want %d", got, DevGOGC)
	}
	os.Setenv("GOGC", "100")
	setDevGOGC()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with GOGC=100, the manager's GC percent is %d, want 100", got)
	}
}
