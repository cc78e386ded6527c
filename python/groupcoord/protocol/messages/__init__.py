"""One module per API, each declaring its request and response (and their structs) once for
all versions, from the facts of Kafka's message specifications."""
