package cities_test

import (
	"strings"
	"testing"

	"github.com/cubelinux/cube/examples/cities"
)

func TestBundled(t *testing.T) {
	cs, err := cities.Bundled()
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 171075 {
		t.Fatalf("%d cities", len(cs))
	}
	found := false
	for _, c := range cs {
		if c.Lat < -90 || c.Lat > 90 || c.Lng < -180 || c.Lng > 180 {
			t.Fatalf("%+v is off the globe", c)
		}
		if c.Name == "Paris" && c.Country == "FR" {
			found = c.Lat > 48.8 && c.Lat < 48.9
		}
	}
	if !found {
		t.Fatal("no Paris, FR at 48.8N")
	}
}

func TestReadCSVErrors(t *testing.T) {
	for _, in := range []string{"", "name,country,lat,lng\nA,B,x,1\n", "name,country,lat,lng\nA,B,1\n"} {
		if _, err := cities.ReadCSV(strings.NewReader(in)); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}
