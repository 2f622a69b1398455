// Package console embeds the built browser console (console/dist) into the
// bastion binary. A committed dist/.keep lets the package compile before the
// console was ever built; the API server then explains how to build it.
package console

import (
	"embed"
	"io/fs"
)

//go:embed all:dist
var dist embed.FS

// FS returns the built console, rooted at dist/.
func FS() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err) // "dist" is a literal directory that go:embed guarantees
	}
	return sub
}
