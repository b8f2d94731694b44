package sanctions

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// ParsePublishDate reads the publish date from the publshInformation header of OFAC's XML
// edition of a list (sdn.xml, consolidated.xml; OFAC spells the element so), such as
//
//	<sdnList ...><publshInformation><Publish_Date>12/28/2023</Publish_Date>
//	<Record_Count>13821</Record_Count></publshInformation>...
//
// It stops reading at the end of that header, which comes before the entries, so a caller may
// close the rest of a large download unread.
func ParsePublishDate(r io.Reader) (time.Time, error) {
	d := xml.NewDecoder(r)
	var inHeader bool
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return time.Time{}, errors.New("sanctions: sdn.xml has no publshInformation/Publish_Date")
		}
		if err != nil {
			return time.Time{}, fmt.Errorf("sanctions: sdn.xml: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch {
			case t.Name.Local == "publshInformation":
				inHeader = true
			case inHeader && t.Name.Local == "Publish_Date":
				var v string
				if err := d.DecodeElement(&v, &t); err != nil {
					return time.Time{}, fmt.Errorf("sanctions: sdn.xml Publish_Date: %w", err)
				}
				// OFAC writes month/day/year without zero padding rules being promised.
				p, err := time.Parse("1/2/2006", strings.TrimSpace(v))
				if err != nil {
					return time.Time{}, fmt.Errorf("sanctions: sdn.xml Publish_Date %q is not MM/DD/YYYY", v)
				}
				return p, nil
			}
		case xml.EndElement:
			if t.Name.Local == "publshInformation" {
				return time.Time{}, errors.New("sanctions: sdn.xml publshInformation has no Publish_Date")
			}
		}
	}
}

// PublishHeader is the start of an XML edition dated published with count entries, as OFAC
// writes it: what ParsePublishDate reads. The dev environment and tests serve it beside the
// CSV files of the embedded release, whose XML edition the project does not carry.
func PublishHeader(published time.Time, count int) []byte {
	return fmt.Appendf(nil, "<?xml version=\"1.0\" standalone=\"yes\"?>\n<sdnList><publshInformation><Publish_Date>%s</Publish_Date><Record_Count>%d</Record_Count></publshInformation></sdnList>\n",
		published.Format("01/02/2006"), count)
}
