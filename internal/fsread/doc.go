// Package fsread reads input files the way every input of the tool must be
// read: only regular files (a device such as /dev/zero, a FIFO or a folder
// is refused before a byte is read, so an input can neither stream without
// end nor block forever), and never more than a limit that fits the format.
// HashPath and HashFile give the SHA-256 by which the tool records its
// inputs (HashPath: metrics.json, the experiment records, artifacts.json); AvailableMemory bounds what an
// input may make the process allocate.
package fsread
