"""OntoSkills interop: read and write its packages, so either tool can use the other's skills.

    vocab      namespaces (three generations), IRI slugs, tiers             (no dependencies)
    reader     ontoskill.ttl (+ package.json, lock, intents.json) -> Skill  (rdflib)
    intents    per-skill intents.json: read, write, precomputed vectors     (numpy)
    writer     Skill -> ontoskill.ttl, SHACL validation                     (rdflib, pyshacl)
    compile    skill roots -> <out>/<key>/{ontoskill.ttl, intents.json}
    export     the MiniLM model.onnx + tokenizer.json, OntoSkills' layout
    registry   registry index (folder or HTTP) -> installed packages, lock  (stdlib)
    shapes     OntoMCP's ``ontoskill`` tool answers, field by field

The loader (``skills.load_skills``) reads ``ontoskill.ttl`` through ``reader``; the index
builder takes ``intents.json`` vectors through ``intents.precomputed_vectors``. Importing this
package imports neither rdflib nor pyshacl (the ``[ontoskills]`` extra): modules that need
them import them when called.
"""
