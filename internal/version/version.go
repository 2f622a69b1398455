// Package version holds the build's version, set by the Makefile through
// -ldflags "-X github.com/bastion-dev/bastion/internal/version.Version=...".
package version

// Version of this build. "0.1.0-dev" when built without the Makefile.
var Version = "0.1.0-dev"

// Build identifies the sources a binary was built from: the Makefile sets
// it to a hash of them, the same in bastion and in the bastion-runner
// built beside it. Empty when built without the Makefile.
var Build = ""

// RunnerProbe is what `bastion-runner version` prints: the runner's word
// that it is bastion-runner, of this version, built from these sources.
// The local launcher starts it only when it says what bastion would.
func RunnerProbe() string {
	return "bastion-runner " + Version + " " + Build
}
