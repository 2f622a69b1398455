// Package version holds the build's version, set by the Makefile through
// -ldflags "-X github.com/bastion-dev/bastion/internal/version.Version=...".
package version

// Version of this build. "0.1.0-dev" when built without the Makefile.
var Version = "0.1.0-dev"
