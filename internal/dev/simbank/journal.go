package simbank

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// JournalFile is the name of the simulated bank's journal inside Options.Dir: JSON lines, one
// record per change, each holding the whole new version of a quote, an account or a transfer.
// Replaying it in order rebuilds the bank; the last version of each transfer is its ledger entry.
const JournalFile = "simbank.jsonl"

// record is one line of the journal; exactly one field is set.
type record struct {
	Quote    *quote   `json:"quote,omitempty"`
	Account  *account `json:"account,omitempty"`
	Transfer *Entry   `json:"transfer,omitempty"`
	// Lost is the id of a transfer the bank forgot (Server.Lose).
	Lost int64 `json:"lost,omitempty"`
}

// journal appends records durably: a change is on disk (fsync) before the bank acts on it or
// answers, so a restart forgets nothing a client was told.
type journal struct {
	f    *os.File
	size int64
}

// openJournal replays dir's journal through apply and opens it for appending. A last line cut
// short by a crash is dropped; a damaged line before it is an error, since skipping it could
// forget a payout. The directory is locked so that two banks cannot share it.
func openJournal(dir string, apply func(record)) (*journal, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("simbank: %w", err)
	}
	path := filepath.Join(dir, JournalFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("simbank: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("simbank: %s is in use by another simulated bank: %w", path, err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("simbank: read %s: %w", path, err)
	}
	good := 0
	for line := 1; good < len(data); line++ {
		end := bytes.IndexByte(data[good:], '\n')
		if end < 0 {
			break // a torn last write: never acknowledged, so dropped
		}
		var r record
		if err := json.Unmarshal(data[good:good+end], &r); err != nil || (r.Quote == nil && r.Account == nil && r.Transfer == nil && r.Lost == 0) {
			f.Close()
			if err == nil {
				err = errors.New("empty record")
			}
			return nil, fmt.Errorf("simbank: %s line %d: %w", path, line, err)
		}
		apply(r)
		good += end + 1
	}
	if err := f.Truncate(int64(good)); err != nil {
		f.Close()
		return nil, fmt.Errorf("simbank: %w", err)
	}
	if _, err := f.Seek(int64(good), io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("simbank: %w", err)
	}
	return &journal{f: f, size: int64(good)}, nil
}

func (j *journal) append(r record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = j.f.Write(b)
	if err == nil {
		err = j.f.Sync()
	}
	if err != nil {
		// Cut the record off: the bank will not apply it, so the file must not keep it.
		_ = j.f.Truncate(j.size)
		_, _ = j.f.Seek(j.size, io.SeekStart)
		return err
	}
	j.size += int64(len(b))
	return nil
}

func (j *journal) close() error { return j.f.Close() }
