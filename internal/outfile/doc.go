// Package outfile owns how the tool writes its output files: it checks,
// before any work, that every output path is safe to write (never an
// input, never another output, never a link, a device or a folder, in a
// folder that exists and is writable), writes each file atomically
// (a temporary file beside it, synced, renamed into place, created with
// the process's umask), keeps the registry of temporary files that a
// signal handler removes, and removes the temporaries that a killed run
// left behind. LockDir serializes runs that write a set of files that go
// together (a model and its metrics) into one folder. It imports only the
// standard library and internal/fsread (which names file kinds the same way
// for inputs), so that onnxio, eval, unlearn and the command can all use
// it. It never reads inputs (package internal/fsread does).
package outfile
