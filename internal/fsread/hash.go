package fsread

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// HashPath returns the SHA-256 of a file, or of a folder's content: the
// hash of the lines "<sha256 of file>  ./<path relative to the folder>\n"
// of every regular file below it, sorted by path, which is what
//
//	(cd DIR && find . -type f | LC_ALL=C sort | xargs sha256sum) | sha256sum
//
// prints for names without spaces or special characters. Hidden files are
// included; symbolic links are followed for the top path only. Every
// record of an input (metrics.json, the experiment records, artifacts.json)
// hashes it with this.
func HashPath(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return HashFile(path)
	}
	var files []string
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			rel, err := filepath.Rel(path, p)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	slices.Sort(files)
	h := sha256.New()
	for _, f := range files {
		s, err := HashFile(filepath.Join(path, filepath.FromSlash(f)))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s  ./%s\n", s, f)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// HashFile returns the hex SHA-256 of the file at path.
func HashFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// HashInput returns the hex SHA-256 of the input file at path (what names
// it in errors: "model", "oracle"), read from the descriptor Open checked:
// a regular file (a folder, a device or a FIFO is refused before a byte is
// read, and the open cannot block) of at most limit bytes (limit ≤ 0: no
// limit), checked before hashing, so that a 20 GB sparse file is refused
// at once rather than hashed for a minute. Cancelling ctx stops the hash
// between chunks of hashChunk bytes, with ctx's error.
func HashInput(ctx context.Context, path, what string, limit int64) (string, error) {
	f, err := Open(path, what)
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	if limit > 0 && st.Size() > limit {
		return "", fmt.Errorf("%s %s: %d bytes, more than the %d a %s can have", what, path, st.Size(), limit, what)
	}
	return hashReader(ctx, f, path, limit)
}

// hashChunk is how much HashInput reads between looks at its context.
const hashChunk = 4 << 20

// hashReader hashes r (the file at path) in chunks, checking ctx before
// each and refusing more than limit bytes (limit ≤ 0: no limit), which
// catches a file that grows while it is hashed.
func hashReader(ctx context.Context, r io.Reader, path string, limit int64) (string, error) {
	h := sha256.New()
	var n int64
	for {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		k, err := io.CopyN(h, r, hashChunk)
		n += k
		if limit > 0 && n > limit {
			return "", fmt.Errorf("%s: grew past %d bytes while it was read", path, limit)
		}
		if errors.Is(err, io.EOF) {
			return hex.EncodeToString(h.Sum(nil)), nil
		} else if err != nil {
			return "", fmt.Errorf("%s: %w", path, err)
		}
	}
}
