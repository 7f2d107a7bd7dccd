//go:build !unix

package main

import "os"

func windowWidth(*os.File) int { return 0 }
