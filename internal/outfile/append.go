package outfile

import (
	"fmt"
	"os"

	"github.com/unlearn-tool/unlearn/internal/fsread"
)

// Append opens the file at path for appending, creating it (mode 0666 less
// the umask) when absent: a log of records such as an experiment's
// results.jsonl, which grows by whole lines rather than being replaced.
// The open follows no final symbolic link and does not block (a link or
// FIFO put in the checked file's place is refused, not written through or
// waited on), and the opened descriptor must be a regular file.
func Append(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY|appendFlags, 0o666)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("%s: is a %s, not a regular file; records are appended only to regular files",
			path, fsread.FileKind(st.Mode()))
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
