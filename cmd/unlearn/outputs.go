package main

import "github.com/unlearn-tool/unlearn/internal/clilog"

// outs checks every command's outputs against its inputs before any work
// (clilog.Outputs); its Config is this run's --config file (globalArgs
// takes it out of the arguments).
var outs = &clilog.Outputs{InputFlags: []string{"model", "oracle", "forget", "exclude", "mask"},
	Bundled: func() string { p, _ := bundledData(); return p }}
