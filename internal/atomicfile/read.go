package atomicfile

import (
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ReadFile reads the regular file at path, refusing one larger than max
// bytes. Anything else — a named pipe, a device such as /dev/zero, a socket,
// a directory — is refused without reading: a pipe with no writer would
// block forever and a device can be endless. The file is opened without
// blocking and checked through the open handle, so what is read is what
// was checked even if the path is swapped in between. The errors name
// path and say what was wrong with it.
func ReadFile(path string, max int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("read %s: %s: only regular files are read", path, NotRegular(fi.Mode()))
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("read %s: the file is %d bytes, over the limit of %d", path, fi.Size(), max)
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("read %s: the file grew over the limit of %d bytes while it was read", path, max)
	}
	return b, nil
}

// NotRegular says what a file of the given mode is, for an error that
// refuses to read it.
func NotRegular(mode fs.FileMode) string {
	switch {
	case mode&fs.ModeNamedPipe != 0:
		return "it is a named pipe, not a regular file"
	case mode&fs.ModeSocket != 0:
		return "it is a socket, not a regular file"
	case mode&fs.ModeDevice != 0:
		return "it is a device, not a regular file"
	case mode.IsDir():
		return "it is a directory, not a regular file"
	}
	return "it is not a regular file"
}
