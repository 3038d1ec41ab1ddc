package server

import (
	"errors"
	"iter"

	"github.com/cubelinux/cube"
)

// PUT ns c1..cd value
func prepPut(cl *call) (*cube.Namespace, txOp, error) {
	ns, cs, err := cl.coords(1, false, "")
	if err != nil {
		return nil, nil, err
	}
	cl.at[0] = cs[0]
	return ns, putOp, nil
}

func putOp(cl *call, tx *cube.Tx) error {
	if err := tx.Put(cl.at[0], cl.args[len(cl.args)-1]); err != nil {
		return err
	}
	cl.w.OK()
	return nil
}

// GET ns c1..cd
func cmdGet(cl *call) error {
	ns, cs, err := cl.coords(0, false, "")
	if err != nil {
		return err
	}
	v, err := cl.c.get(cl.ctx, ns, cs[0])
	if errors.Is(err, cube.ErrNotFound) {
		cl.w.Null()
		return nil
	}
	if err != nil {
		return err
	}
	cl.w.Bulk(v)
	return nil
}

// DEL ns c1..cd
func prepDel(cl *call) (*cube.Namespace, txOp, error) {
	ns, cs, err := cl.coords(0, false, "")
	if err != nil {
		return nil, nil, err
	}
	cl.at[0] = cs[0]
	return ns, delOp, nil
}

func delOp(cl *call, tx *cube.Tx) error {
	ok, err := tx.Delete(cl.at[0])
	if err != nil {
		return err
	}
	cl.w.Flag(ok)
	return nil
}

// REGION ns min1..mind max1..maxd [LIMIT n] [COUNT]
func cmdRegion(cl *call) error {
	ns, cs, err := cl.coords(0, true, "min", "max")
	if err != nil {
		return err
	}
	d, lo, hi := ns.Dims(), cs[0], cs[1]
	limit, count := 0, false
	err = cl.options(2+2*d, map[string]int{"LIMIT": 1, "COUNT": 0}, func(key string, v [][]byte) error {
		switch key {
		case "LIMIT":
			limit, err = parseCount(v[0], "LIMIT")
			return err
		default:
			count = true
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i := range lo {
		if lo[i] > hi[i] {
			if cl.geo {
				return usageErr("bad box: min %s is above max %s degrees of %s (the box is min longitude latitude then max longitude latitude; one across the antimeridian is two boxes)",
					cube.FormatDegrees(lo[i]), cube.FormatDegrees(hi[i]), [2]string{"longitude", "latitude"}[i])
			}
			return usageErr("bad box: min %d is above max %d on axis %d (the box is min1..mind then max1..maxd)", lo[i], hi[i], i+1)
		}
	}
	if count {
		if limit > 0 {
			return usageErr("REGION: COUNT and LIMIT do not go together")
		}
		n, err := ns.Count(cl.ctx, lo, hi)
		if err != nil {
			return err
		}
		cl.w.Int(int64(n))
		return nil
	}
	seq, err := ns.Region(cl.ctx, lo, hi, limit)
	if err != nil {
		return err
	}
	cl.pairs(seq)
	return nil
}

// pairs writes a scan's [coords, value] pairs as one array (REGION's and
// WITHIN's reply). The count is not known before the scan: the pairs go
// after a placeholder and the header is put in front at the end.
func (cl *call) pairs(seq iter.Seq2[[]int32, []byte]) {
	mark := len(cl.w.B)
	n := 0
	for c, v := range seq {
		cl.w.Array(2)
		cl.coordOut(c)
		cl.w.Bulk(v)
		n++
	}
	body := append([]byte(nil), cl.w.B[mark:]...)
	cl.w.B = cl.w.B[:mark]
	cl.w.Array(n)
	cl.w.B = append(cl.w.B, body...)
}
