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
//	(cd DIR && find -L . -type f | LC_ALL=C sort | xargs sha256sum) | sha256sum
//
// prints for names without spaces or special characters. Hidden files are
// included. Symbolic links are followed, the top path's included (a
// dataset given as a link to its folder is hashed by its files, not as an
// empty folder), each as it is met in the walk, and a file is hashed from
// the descriptor opened after its type check (a FIFO is skipped as find
// skips it, and one swapped in is refused, without blocking); a link to a
// folder that contains it (a loop) is an error naming the link, and a
// dangling link is left out, as find -L leaves it. Every record of an
// input (metrics.json, the experiment records, artifacts.json) hashes it
// with this.
func HashPath(path string) (string, error) {
	return HashTree(context.Background(), path)
}

// HashTree is HashPath stopped by ctx (between files, and between chunks
// of a file), with ctx's error.
func HashTree(ctx context.Context, path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return HashInput(ctx, path, "file", 0)
	}
	ancestors, err := realAncestors(path)
	if err != nil {
		return "", err
	}
	var files []string
	if err := walkLinks(ctx, path, "", append(ancestors, st), &files); err != nil {
		return "", err
	}
	slices.Sort(files)
	h := sha256.New()
	for _, f := range files {
		s, err := HashInput(ctx, filepath.Join(path, filepath.FromSlash(f)), "file", 0)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s  ./%s\n", s, f)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// realAncestors are the folders above path once its links are resolved, up
// to the root: a link inside a dataset to one of them (to / or to the
// dataset's parent) is a loop, not more files.
func realAncestors(path string) ([]os.FileInfo, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, err
	}
	if real, err = filepath.Abs(real); err != nil {
		return nil, err
	}
	var out []os.FileInfo
	for d := filepath.Dir(real); ; d = filepath.Dir(d) {
		if st, err := os.Stat(d); err == nil {
			out = append(out, st)
		}
		if filepath.Dir(d) == d {
			return out, nil
		}
	}
}

// walkLinks adds to files the paths, relative to root and with slashes,
// of the regular files in root/rel and below, following symbolic links;
// ancestors are the folders that contain root/rel (itself included),
// which a link may not lead back to.
func walkLinks(ctx context.Context, root, rel string, ancestors []os.FileInfo, files *[]string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	dir := filepath.Join(root, filepath.FromSlash(rel))
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		name := e.Name()
		if rel != "" {
			name = rel + "/" + e.Name()
		}
		p := filepath.Join(dir, e.Name())
		t := e.Type()
		var st os.FileInfo
		if t&fs.ModeSymlink != 0 {
			if st, err = os.Stat(p); err != nil {
				continue // a dangling link: no file (find -L skips it too)
			}
			t = st.Mode().Type()
		} else if t.IsDir() {
			if st, err = e.Info(); err != nil {
				return err
			}
		}
		switch {
		case t.IsDir():
			for _, a := range ancestors {
				if os.SameFile(a, st) {
					return fmt.Errorf("%s: a symbolic link to a folder that contains it (a loop); the folder cannot be hashed", p)
				}
			}
			if err := walkLinks(ctx, root, name, append(ancestors[:len(ancestors):len(ancestors)], st), files); err != nil {
				return err
			}
		case t.IsRegular():
			*files = append(*files, name)
		}
	}
	return nil
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
