package onnxfix

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

func parseValue(b []byte) (Value, error) {
	var v Value
	err := fields(b, func(f field) error {
		switch f.num {
		case valueName:
			return f.setStr(&v.Name, "name")
		case valueType:
			return f.message("type", func(f field) error {
				if f.num != typeTensor {
					return nil // sequence, map, optional or sparse: not a tensor
				}
				return f.message("tensor_type", func(f field) error {
					switch f.num {
					case tensorTypeElem:
						v.ElemType = int32(f.v)
						if int64(f.v) != int64(v.ElemType) {
							return fmt.Errorf("element type %d is not a data type", f.v)
						}
						return f.want(protowire.VarintType, "elem_type")
					case tensorTypeShape:
						v.HasShape = true
						v.Dims, v.DimParams = nil, nil
						return f.message("shape", func(f field) error {
							if f.num != shapeDim {
								return nil
							}
							d, p := int64(-1), ""
							err := f.message("dim", func(f field) error {
								switch f.num {
								case dimValue:
									d, p = int64(f.v), ""
									if err := f.want(protowire.VarintType, "dim_value"); err != nil {
										return err
									}
									if d < 0 {
										return fmt.Errorf("dimension %d has size %d", len(v.Dims), d)
									}
								case dimParam:
									s, err := f.str("dim_param")
									d, p = -1, s
									return err
								}
								return nil
							})
							v.Dims = append(v.Dims, d)
							v.DimParams = append(v.DimParams, p)
							return err
						})
					}
					return nil
				})
			})
		}
		return nil
	})
	if err != nil {
		return v, err
	}
	fixed := make([]int64, 0, len(v.Dims))
	for _, d := range v.Dims {
		if d >= 0 {
			fixed = append(fixed, d)
		}
	}
	if _, err := countElements(fixed); err != nil {
		return v, err
	}
	return v, nil
}
