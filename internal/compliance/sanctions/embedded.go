package sanctions

import (
	"embed"
	"sync"
	"time"
)

// The data directory carries the release's provenance and checksums (data/README.md).
//
//go:embed data/sdn.csv data/add.csv data/alt.csv data/ofac-country-iso2.csv
var embeddedData embed.FS

// EmbeddedRelease names the embedded release for logs: OFAC publishes no version number, so
// the dates during which it was the live list identify it.
const EmbeddedRelease = "OFAC SDN list live 2023-12-28 to 2024-01-11"

// EmbeddedPublished is the publish date of the embedded release (the first day it was live):
// with any age limit of days it is stale, so a deployment must load a newer release.
var EmbeddedPublished = time.Date(2023, 12, 28, 0, 0, 0, 0, time.UTC)

// EmbeddedFile returns one file of the embedded release (SDNFile, AddressFile, AliasFile or
// CountriesFile), as published; the dev environment serves them to payoutd's refresher.
func EmbeddedFile(name string) []byte { return embeddedFile(name) }

func embeddedFile(name string) []byte {
	b, err := embeddedData.ReadFile("data/" + name)
	if err != nil {
		// Only reachable if the go:embed line above and the file names disagree, which the
		// tests catch.
		panic("sanctions: embedded " + name + ": " + err.Error())
	}
	return b
}

// Embedded returns the list compiled into the binary. It is parsed on first use and shared
// afterwards: a List is immutable, and every caller gets the same data anyway.
func Embedded() (*List, error) { return embeddedOnce() }

var embeddedOnce = sync.OnceValues(parseEmbedded)

func parseEmbedded() (*List, error) {
	var files [4][]byte
	for i, name := range fileNames {
		files[i] = embeddedFile(name)
	}
	l, err := parse("embedded "+EmbeddedRelease, files)
	if l != nil {
		l.published = EmbeddedPublished
	}
	return l, err
}
