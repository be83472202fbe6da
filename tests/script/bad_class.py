# expect: 2:1: error: classes are not supported
class Model:
    def forward(self, x):
        return relu(x)
