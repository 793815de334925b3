"""Importers that turn benchmark catalogs (Spider/BIRD ``tables.json``) into our inputs.

The output is the same as a hand-written project: ``<out>/<db>.json`` plus
``<out>/<db>/docs/*.md``, so benchmarks exercise exactly the path real users take.
"""
