package server

import (
	"strings"

	"github.com/cubelinux/cube"
)

// NS.CREATE ns DIMS d | GEO [CURVE hilbert|morton] [MAXVALUE bytes]
func cmdNSCreate(cl *call) error {
	var o cube.NamespaceOptions
	dimsSet := false
	err := cl.options(2, map[string]int{"DIMS": 1, "GEO": 0, "CURVE": 1, "MAXVALUE": 1}, func(key string, v [][]byte) error {
		var err error
		switch key {
		case "GEO":
			o.Geo = true
		case "DIMS":
			o.Dims, err = parseCount(v[0], "DIMS")
			if err == nil && (o.Dims < 1 || o.Dims > cube.MaxDims) {
				err = usageErr("DIMS must be 1 to %d, got %d", cube.MaxDims, o.Dims)
			}
			dimsSet = true
		case "CURVE":
			o.Curve, err = cube.ParseCurve(string(v[0]))
			if err != nil {
				err = usageErr("CURVE must be hilbert or morton, got '%s'", clip(v[0]))
			}
		case "MAXVALUE":
			o.MaxValueSize, err = parseCount(v[0], "MAXVALUE")
		}
		return err
	})
	if err != nil {
		return err
	}
	switch {
	case o.Geo && dimsSet && o.Dims != 2:
		return usageErr("NS.CREATE: a GEO namespace has 2 dimensions (longitude latitude), not DIMS %d; drop DIMS", o.Dims)
	case o.Geo:
		o.Dims = 2
	case !dimsSet:
		return usageErr("NS.CREATE needs DIMS d (or GEO for longitude latitude in degrees); usage: %s", cl.cmd.Synopsis)
	}
	if _, err := cl.s.db.CreateNamespace(cl.ctx, string(cl.args[1]), o); err != nil {
		return err
	}
	cl.w.OK()
	return nil
}

// NS.LIST
func cmdNSList(cl *call) error {
	infos := cl.s.db.Namespaces()
	cl.w.Array(len(infos))
	for _, in := range infos {
		cl.w.BulkString(in.Name)
	}
	return nil
}

// NS.INFO ns
func cmdNSInfo(cl *call) error {
	ns, err := cl.ns(cl.args[1])
	if err != nil {
		return err
	}
	in := ns.Info()
	w := cl.w
	w.Map(9)
	w.BulkString("name")
	w.BulkString(in.Name)
	w.BulkString("dims")
	w.Int(int64(in.Dims))
	w.BulkString("curve")
	w.BulkString(strings.ToLower(in.Curve))
	w.BulkString("geo")
	w.Flag(in.Geo)
	w.BulkString("max_value_size")
	w.Int(int64(in.MaxValueSize))
	w.BulkString("values")
	w.Int(int64(in.Values))
	w.BulkString("value_bytes")
	w.Int(in.ValueBytes)
	w.BulkString("edges")
	w.Int(int64(in.Edges))
	w.BulkString("last_lsn")
	w.Int(int64(in.LastLSN))
	return nil
}

// NS.DROP ns
func cmdNSDrop(cl *call) error {
	if _, err := cl.ns(cl.args[1]); err != nil {
		return err
	}
	if err := cl.s.db.DropNamespace(cl.ctx, string(cl.args[1])); err != nil {
		return err
	}
	cl.w.OK()
	return nil
}
