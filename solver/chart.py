import click


@click.command()
def chart() -> None:
    """placeholder"""
