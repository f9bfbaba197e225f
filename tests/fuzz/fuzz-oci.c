/* The OCI document parsers (src/image/oci.c): every input goes through
 * the sniffer and all three parsers, as a registry or an OCI layout can
 * hand any document to any of them.  What a parser accepts must hold what
 * the later steps rely on: well-formed digests, layer media types we can
 * apply, and an index choice that is one of its entries.  */
#include "config.h"

#include "image/oci.h"
#include "tests/fuzz/fuzz.h"

static void
check_descriptor (const struct sr_descriptor *d)
{
  fuzz_check (sr_digest_valid (d->digest), "accepted digest %s", d->digest);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  const char *json = (const char *) data;
  struct sr_oci_index idx;
  struct sr_oci_manifest m;
  struct sr_oci_config c;
  sr_error_t err = NULL;
  enum sr_oci_kind kind = sr_oci_sniff (json, size);

  fuzz_check (kind == SR_OCI_UNKNOWN || kind == SR_OCI_INDEX || kind == SR_OCI_MANIFEST,
              "sniffed kind %d", (int) kind);

  if (sr_oci_parse_index (json, size, &idx, &err) == 0)
    {
      const struct sr_descriptor *d;

      for (size_t i = 0; i < idx.n_manifests; i++)
        check_descriptor (&idx.manifests[i]);
      d = sr_oci_index_select (&idx, &err);
      if (d)
        fuzz_check (d >= idx.manifests && d < idx.manifests + idx.n_manifests,
                    "the chosen entry is not one of the index");
      else
        {
          fuzz_check (err && err->msg, "no entry chosen and no error");
          sr_error_free (&err);
        }
      sr_oci_index_done (&idx);
      fuzz_check (idx.manifests == NULL && idx.n_manifests == 0, "index_done left entries");
    }
  else
    {
      fuzz_check (err && err->msg, "index refused without an error");
      sr_error_free (&err);
    }

  if (sr_oci_parse_manifest (json, size, &m, &err) == 0)
    {
      check_descriptor (&m.config);
      fuzz_check (m.media_type == NULL || sr_oci_kind_of (m.media_type) == SR_OCI_MANIFEST,
                  "accepted manifest media type %s", m.media_type);
      for (size_t i = 0; i < m.n_layers; i++)
        {
          check_descriptor (&m.layers[i]);
          fuzz_check (sr_oci_layer_type_ok (m.layers[i].media_type),
                      "accepted layer type %s", m.layers[i].media_type);
        }
      sr_oci_manifest_done (&m);
    }
  else
    {
      fuzz_check (err && err->msg, "manifest refused without an error");
      sr_error_free (&err);
    }

  if (sr_oci_parse_config (json, size, &c, &err) == 0)
    {
      char **lists[] = { c.env, c.entrypoint, c.cmd };
      size_t total = 0;

      /* Read every copied string: ASan sees a bad copy.  */
      for (size_t i = 0; i < SR_ARRAY_SIZE (lists); i++)
        for (char **v = lists[i]; v && *v; v++)
          total += strlen (*v);
      fuzz_check (total < size, "the config holds more text than its JSON");
      sr_oci_config_done (&c);
    }
  else
    {
      fuzz_check (err && err->msg, "config refused without an error");
      sr_error_free (&err);
    }
  return 0;
}
