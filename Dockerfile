# A query service: the runtime and the HTTP/MCP server, nothing of the build side (no Dagster,
# LanceDB or torch). Indexes are built elsewhere (`schemarag build`, CI, a scheduled job) and
# mounted or copied to /app/artifacts; the service picks up newly published versions by itself.
#
#   docker build -t schemarag-serve .
#   docker run -p 8765:8765 -v "$PWD/artifacts:/app/artifacts:ro" \
#     -e SCHEMARAG_SERVE_API_KEYS="=sha256:<hash from: schemarag serve --new-key ''>" schemarag-serve
#
# `make check-dockerfile` (run by CI) replays these lines without Docker: the same COPY, WORKDIR,
# ENV and RUN in a fresh venv, then the CMD, queried over HTTP with a key.
FROM python:3.11-slim
WORKDIR /app
COPY . /app
RUN pip install --no-cache-dir '.[serve]'
RUN python -c "from schemarag import Retriever, __version__; print('schemarag', __version__)"
ENV SCHEMARAG_ARTIFACTS=/app/artifacts
EXPOSE 8765
CMD ["schemarag", "serve", "--host", "0.0.0.0", "--port", "8765"]
