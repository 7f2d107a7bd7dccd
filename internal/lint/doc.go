// Package lint holds tests that keep the package layering honest. It has
// no code of its own.
package lint
