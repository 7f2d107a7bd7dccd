package main

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"runtime/debug"
)

func init() {
	register(&command{
		name:    "version",
		summary: "print skade's version and the Go version it was built with",
		example: "skade version",
		run: func(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
			v := "(devel)"
			if bi, ok := debug.ReadBuildInfo(); ok {
				if bi.Main.Version != "" {
					v = bi.Main.Version
				}
				for _, s := range bi.Settings {
					if s.Key == "vcs.revision" && len(s.Value) >= 12 {
						v += " " + s.Value[:12]
					}
				}
			}
			fmt.Fprintf(e.stdout, "skade %s %s %s/%s\n", v, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return nil
		},
	})
}
